import type { TargetedKeyboardEvent } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { CardButton } from "../../components/Cards";
import { cardKey, cardName, sameCard, type CardLike } from "../../lib/cards";

/** Arrow keys move between the cards one may press (roving focus, like a toolbar). */
function moveFocus(event: TargetedKeyboardEvent<HTMLButtonElement>): void {
  const keys = ["ArrowLeft", "ArrowRight", "Home", "End"];
  if (!keys.includes(event.key)) return;
  const group = event.currentTarget.closest(".hand");
  if (!group) return;
  const buttons = [...group.querySelectorAll<HTMLButtonElement>("button.card-button:not([disabled])")];
  const at = buttons.indexOf(event.currentTarget);
  const to = event.key === "Home" ? 0 : event.key === "End" ? buttons.length - 1
    : event.key === "ArrowLeft" ? Math.max(0, at - 1) : Math.min(buttons.length - 1, at + 1);
  buttons[to]?.focus();
  event.preventDefault();
}

/**
 * The player's sorted hand. In play mode legal cards are buttons and the others are
 * disabled; in pick mode (the exchange) cards toggle. When it becomes the player's turn,
 * focus goes to the first playable card (the page does not scroll for it), so the game
 * can be played with Enter alone.
 */
export function Hand(props: {
  cards: readonly CardLike[];
  mode: "play" | "pick" | "view";
  legal: readonly CardLike[];
  picked: readonly CardLike[];
  onCard: (card: CardLike) => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const playable = props.mode === "play" && props.legal.length > 0;
  useEffect(() => {
    if (!playable || !ref.current) return;
    const active = document.activeElement;
    if (active && active !== document.body && !ref.current.contains(active)) return;
    ref.current.querySelector<HTMLButtonElement>("button.card-button:not([disabled])")?.focus({ preventScroll: true });
  });
  const label = props.mode === "play" ? (playable ? "Your hand: choose a card to play" : "Your hand")
    : props.mode === "pick" ? "Your hand: choose two cards to pass" : "Your hand";
  return (
    <div class={`hand hand-${props.mode}`} role="group" aria-label={label} ref={ref}>
      {props.cards.map((card) => {
        const legal = props.legal.some((c) => sameCard(c, card));
        const picked = props.picked.some((c) => sameCard(c, card));
        const disabled = props.mode === "view" || (props.mode === "play" && !legal);
        const name = cardName(card);
        return (
          <CardButton key={cardKey(card)} card={card} disabled={disabled}
            pressed={props.mode === "pick" ? picked : undefined}
            label={props.mode === "play" && !legal && playable ? `${name} (cannot be played now)` : name}
            onClick={() => props.onCard(card)} onKeyDown={moveFocus} />
        );
      })}
    </div>
  );
}
