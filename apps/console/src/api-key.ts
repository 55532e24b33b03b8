/** Where the key is kept: this tab's session only, so it is gone when the tab closes and no other site reads it. */
const STORAGE_KEY = "aptix.apiKey";

export function storedApiKey(): string | undefined {
  return sessionStorage.getItem(STORAGE_KEY) ?? undefined;
}

export function storeApiKey(apiKey: string | undefined): void {
  if (apiKey === undefined) sessionStorage.removeItem(STORAGE_KEY);
  else sessionStorage.setItem(STORAGE_KEY, apiKey);
}
