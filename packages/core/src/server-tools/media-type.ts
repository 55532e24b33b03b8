/**
 * A media type as RFC 9110 §8.3.1 writes it, in ASCII only: `type/subtype` tokens and `; name=value`
 * parameters whose value is a token or a quoted string. It becomes a download's `Content-Type` header, so
 * anything else (a CR/LF, non-ASCII text) would break or forge that header.
 */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const QUOTED_STRING = '"(?:[\\t !#-\\[\\]-~]|\\\\[\\t -~])*"';
const PARAMETER = `${TOKEN}=(?:${TOKEN}|${QUOTED_STRING})`;
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:[ \\t]*;[ \\t]*(?:${PARAMETER})?)*$`);

/** The longest media type kept: no registered one comes near it. */
export const MAX_MEDIA_TYPE_LENGTH = 255;

/** The media type of content whose own type is unknown or unusable. */
export const OPAQUE_MEDIA_TYPE = "application/octet-stream";

export function isMediaType(text: string): boolean {
  return text.length <= MAX_MEDIA_TYPE_LENGTH && MEDIA_TYPE.test(text);
}
