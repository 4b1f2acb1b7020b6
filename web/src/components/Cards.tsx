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

/**
 * A card that is a button (the hand). Its name is the card in words ("Queen of spades"),
 * read from its content; a disabled card says why in a tooltip and in its description
 * (`reasonId`: the element holding the reason's words).
 */
export function CardButton(props: {
  card: CardLike;
  disabled: boolean;
  pressed?: boolean;
  reason?: string | null;
  reasonId?: string | undefined;
  onClick: () => void;
  onKeyDown?: (event: TargetedKeyboardEvent<HTMLButtonElement>) => void;
}) {
  const { card } = props;
  const reason = props.disabled ? (props.reason ?? undefined) : undefined;
  return (
    <button type="button" class={`card card-button suit-${card.suit.toLowerCase()}`}
      data-card={cardKey(card)} disabled={props.disabled} aria-pressed={props.pressed}
      title={reason} data-reason={reason} aria-describedby={reason ? props.reasonId : undefined}
      onClick={props.onClick} onKeyDown={props.onKeyDown}>
      <span aria-hidden="true" class="rank">{rankShort(card.rank)}</span>
      <span aria-hidden="true" class="pip">{suitGlyph(card.suit)}</span>
      <span class="sr-only">{cardName(card)}</span>
    </button>
  );
}
