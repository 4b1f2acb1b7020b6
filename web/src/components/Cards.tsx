import type { TargetedKeyboardEvent } from "preact";
import { cardKey, cardName, rankShort, suitGlyph, type CardLike } from "../lib/cards";

/** A face-up card: the suit's shape and the rank, named in words for screen readers. */
export function CardFace({ card, small }: { card: CardLike; small?: boolean }) {
  return (
    <span class={`card suit-${card.suit.toLowerCase()}${small ? " card-small" : ""}`}
      data-card={cardKey(card)} role="img" aria-label={cardName(card)}>
      <span aria-hidden="true" class="rank">{rankShort(card.rank)}</span>
      <span aria-hidden="true" class="pip">{suitGlyph(card.suit)}</span>
    </span>
  );
}

/** A card that is a button (the hand). */
export function CardButton(props: {
  card: CardLike;
  disabled: boolean;
  pressed?: boolean;
  label: string;
  onClick: () => void;
  onKeyDown?: (event: TargetedKeyboardEvent<HTMLButtonElement>) => void;
}) {
  const { card } = props;
  return (
    <button type="button" class={`card card-button suit-${card.suit.toLowerCase()}`}
      data-card={cardKey(card)} disabled={props.disabled} aria-pressed={props.pressed}
      aria-label={props.label} onClick={props.onClick} onKeyDown={props.onKeyDown}>
      <span aria-hidden="true" class="rank">{rankShort(card.rank)}</span>
      <span aria-hidden="true" class="pip">{suitGlyph(card.suit)}</span>
    </button>
  );
}
