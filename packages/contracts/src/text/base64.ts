/** Standard base64 (RFC 4648 §4) with padding and no line breaks: what `Buffer.toString("base64")` writes. */
export const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const BASE64_MESSAGE = "must be standard base64 (RFC 4648, padded, without line breaks)";

/** Length of the base64 text that encodes `bytes` bytes: the cap a byte limit puts on an encoded string. */
export function base64LengthFor(bytes: number): number {
  return Math.ceil(bytes / 3) * 4;
}
