import { CardFace } from "../../components/Cards";
import type { Seat } from "../../graphql/generated";
import { positionOf, seatName } from "../../lib/cards";
import type { GameView } from "../../live/game";

/**
 * The middle of the felt: each card of the trick in front of the seat that played it,
 * named under it.
 */
export function TrickArea({ view, order }: { view: GameView; order: readonly Seat[] }) {
  const plays = view.currentTrick;
  // The trick in progress is the one after those won so far.
  const done = view.seats.reduce((n, s) => n + s.tricksWon, 0);
  const id = `${view.handNumber}:${done + 1}`;
  return (
    <div class="trick" role="group" aria-label="Trick in progress" data-trick="current" data-trick-id={id}>
      {plays.map((play) => (
        <div key={`${id}-${play.seat}`} class={`play play-${positionOf(order, play.seat)}`} data-played-by={play.seat}>
          <CardFace card={play.card} />
          <span class="play-seat">
            <span class="sr-only">played by </span>{seatName(play.seat)}
          </span>
        </div>
      ))}
    </div>
  );
}
