// The table's sound cues (when sounds are on): the player's turn comes, a trick lands.
import { useEffect } from "preact/hooks";
import { teamOf } from "../../lib/cards";
import { trickId, type LandedTrick } from "../../lib/tricks";
import type { GameView } from "../../live/game";
import { play } from "../../state/sound";

const TURN_PHASES = new Set(["BIDDING", "EXCHANGE", "PLAYING"]);

/** Chime when the turn becomes the viewer's, and when a trick lands (won or lost). */
export function useTableSounds(view: GameView, landed: LandedTrick | null): void {
  const me = view.viewerSeat;
  const myTurn = me !== null && view.turn === me && TURN_PHASES.has(view.phase);
  const id = landed ? trickId(landed) : null;
  // In the order things happen: a trick lands, then the turn comes (to its winner).
  useEffect(() => {
    if (!landed || me === null) return;
    play(teamOf(landed.winner) === teamOf(me) ? "trick-won" : "trick-lost");
  }, [id]);
  useEffect(() => {
    if (myTurn) play("turn");
  }, [myTurn, view.phase]);
}
