/** Server-minted ids (files, lease owners); `prefix` says what the id names. */
export interface IdGenerator {
  newId(prefix: string): string;
}
