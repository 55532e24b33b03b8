/** Content hashes for FileRefs and request idempotency (AGN-033 §6.3, IDX-016): `sha256:<hex>`. */
export interface ContentHashService {
  hash(content: Uint8Array | string): string;
}
