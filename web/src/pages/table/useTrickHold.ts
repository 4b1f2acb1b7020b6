// A completed trick stays on the felt for a moment ("North wins"), then is gathered
// toward its winner; only then does the felt show the trick in progress. The game does
// not wait for it: the clock runs and the player may play on (which gathers at once).
import { useEffect, useState } from "preact/hooks";
import { trickId, type LandedTrick } from "../../lib/tricks";

/** How long a completed trick stays, then how long it takes to be gathered (ms). */
export const HOLD_MS = 1200;
export const GATHER_MS = 400;

export interface HeldTrick {
  trick: LandedTrick;
  /** Held: on the felt as it fell; gathering: moving to its winner. */
  stage: "held" | "gathering";
}

/**
 * The completed trick on the felt now (null: show the trick in progress), and `release`
 * to gather it before its time (the player moves on). A newer trick replaces an older one
 * still held (a table of bots may finish several at once).
 */
export function useTrickHold(landed: LandedTrick | null): { held: HeldTrick | null; release: () => void } {
  const [held, setHeld] = useState<HeldTrick | null>(null);
  const id = landed ? trickId(landed) : null;

  useEffect(() => {
    if (!landed) return;
    setHeld({ trick: landed, stage: "held" });
    const same = (h: HeldTrick | null): boolean => h !== null && trickId(h.trick) === id;
    const gather = setTimeout(() => setHeld((h) => (same(h) && h ? { ...h, stage: "gathering" } : h)), HOLD_MS);
    const done = setTimeout(() => setHeld((h) => (same(h) ? null : h)), HOLD_MS + GATHER_MS);
    return () => {
      clearTimeout(gather);
      clearTimeout(done);
    };
  }, [id]);

  const release = (): void => {
    setHeld((h) => (h && h.stage === "held" ? { ...h, stage: "gathering" } : h));
    setTimeout(() => setHeld((h) => (h && trickId(h.trick) === id ? null : h)), GATHER_MS);
  };
  return { held, release };
}
