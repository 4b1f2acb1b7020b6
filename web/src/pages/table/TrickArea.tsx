import { CardFace } from "../../components/Cards";
import type { Seat } from "../../graphql/generated";
import { positionOf, seatName } from "../../lib/cards";
import { trickId } from "../../lib/tricks";
import type { GameView } from "../../live/game";
import type { HeldTrick } from "./useTrickHold";

/**
 * The middle of the felt: each card of the trick in front of the seat that played it,
 * named under it. A completed trick (`held`) stays with "North wins", then is gathered
 * toward the winner; otherwise the trick in progress is shown.
 */
export function TrickArea({ view, order, held }: { view: GameView; order: readonly Seat[]; held: HeldTrick | null }) {
  const plays = held ? held.trick.plays : view.currentTrick;
  // The trick in progress is the one after those won so far: the same id as when it lands.
  const done = view.seats.reduce((n, s) => n + s.tricksWon, 0);
  const id = held ? trickId(held.trick) : `${view.handNumber}:${done + 1}`;
  const winner = held?.trick.winner ?? null;
  const gathering = held?.stage === "gathering" && winner ? ` gather gather-${positionOf(order, winner)}` : "";
  const label = winner ? `Trick won by ${seatName(winner)}` : "Trick in progress";
  return (
    <div class={`trick${held ? " trick-held" : ""}${gathering}`} role="group" aria-label={label}
      data-trick={held ? "held" : "current"} data-trick-id={id} data-winner={winner ?? undefined}
      data-stage={held?.stage}>
      {plays.map((play) => (
        <div key={`${id}-${play.seat}`} class={`play play-${positionOf(order, play.seat)}${play.seat === winner ? " play-winner" : ""}`}
          data-played-by={play.seat}>
          <CardFace card={play.card} />
          <span class="play-seat">
            <span class="sr-only">played by </span>{seatName(play.seat)}
          </span>
        </div>
      ))}
      {winner && <div class="trick-note" data-trick-note>{seatName(winner)} wins</div>}
    </div>
  );
}
