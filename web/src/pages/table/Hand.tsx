import type { TargetedKeyboardEvent, TargetedPointerEvent } from "preact";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { CardButton } from "../../components/Cards";
import { cardKey, sameCard, type CardLike } from "../../lib/cards";

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
 * disabled, each with the reason (`reasonOf`) as a tooltip and a description; touching a
 * disabled card also shows its reason under the hand. In pick mode (the exchange) cards
 * toggle. When it becomes the player's turn, focus goes to the first playable card (the
 * page does not scroll for it), so the game can be played with Enter alone.
 */
export function Hand(props: {
  cards: readonly CardLike[];
  mode: "play" | "pick" | "view";
  legal: readonly CardLike[];
  picked: readonly CardLike[];
  reasonOf: (card: CardLike) => string | null;
  onCard: (card: CardLike) => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const id = useId();
  const [told, setTold] = useState<string | null>(null);
  const playable = props.mode === "play" && props.legal.length > 0;
  useEffect(() => {
    if (!playable || !ref.current) return;
    const active = document.activeElement;
    if (active && active !== document.body && !ref.current.contains(active)) return;
    ref.current.querySelector<HTMLButtonElement>("button.card-button:not([disabled])")?.focus({ preventScroll: true });
  });
  useEffect(() => setTold(null), [props.mode, props.cards.length]);

  const cards = props.cards.map((card) => {
    const legal = props.legal.some((c) => sameCard(c, card));
    const disabled = props.mode === "view" || (props.mode === "play" && !legal);
    return { card, disabled, reason: disabled ? props.reasonOf(card) : null };
  });
  // One hidden element per distinct reason: the disabled cards' descriptions point to it.
  const reasons = [...new Set(cards.map((c) => c.reason).filter((r): r is string => r !== null))];
  const reasonId = (reason: string | null): string | undefined =>
    reason === null ? undefined : `${id}-why-${reasons.indexOf(reason)}`;
  // Disabled buttons get no click, but a touch or press still reaches the hand.
  const explain = (event: TargetedPointerEvent<HTMLDivElement>): void => {
    const target = event.target instanceof Element ? event.target.closest<HTMLButtonElement>("button[data-reason]") : null;
    if (target?.disabled) setTold(target.dataset["reason"] ?? null);
  };

  const label = props.mode === "play" ? (playable ? "Your hand: choose a card to play" : "Your hand")
    : props.mode === "pick" ? "Your hand: choose two cards to pass" : "Your hand";
  return (
    <div class="hand-area">
      <div class={`hand hand-${props.mode}`} role="group" aria-label={label} ref={ref} onPointerDown={explain}>
        {cards.map(({ card, disabled, reason }) => (
          <CardButton key={cardKey(card)} card={card} disabled={disabled}
            pressed={props.mode === "pick" ? props.picked.some((c) => sameCard(c, card)) : undefined}
            reason={reason} reasonId={reasonId(reason)}
            onClick={() => props.onCard(card)} onKeyDown={moveFocus} />
        ))}
      </div>
      {reasons.map((reason, i) => <span key={reason} id={`${id}-why-${i}`} hidden>{reason}</span>)}
      <p class="hand-hint small" aria-live="polite" data-told={told ?? undefined}>{told}</p>
    </div>
  );
}
