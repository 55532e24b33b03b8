import { storable } from "../storable.js";

/**
 * `onTextDelta` given only storable text (see `storable`). A delta that ends in the first half of a surrogate pair
 * keeps it back for the next, which may begin with the second half: split that way, the pair is one character, not
 * two replacements. `flush` sends what was kept back once the call has ended (alone, it is U+FFFD), so the deltas
 * join to the answer's text as `storable` leaves it.
 */
export function storableDeltas(onTextDelta: (delta: string) => void): {
  onTextDelta: (delta: string) => void;
  flush: () => void;
} {
  let held = "";
  return {
    onTextDelta(delta) {
      const text = held + delta;
      const last = text.charCodeAt(text.length - 1);
      const cut = last >= 0xd800 && last <= 0xdbff ? text.length - 1 : text.length;
      held = text.slice(cut);
      if (cut > 0) onTextDelta(storable(text.slice(0, cut)));
    },
    flush() {
      if (held !== "") onTextDelta(storable(held));
      held = "";
    },
  };
}
