/**
 * Free text may hold anything but U+0000: Postgres text and jsonb cannot store it, so a turn carrying it
 * could never be kept. Refusing it at the edge names the field instead of failing the turn later.
 * Binary content travels as base64.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing NUL is the point.
export const NO_NUL_PATTERN = /^[^\u0000]*$/;

export const NO_NUL_MESSAGE = "must not contain the NUL character (U+0000); send binary content as base64";
