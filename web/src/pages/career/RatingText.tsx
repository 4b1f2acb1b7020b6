import type { RatingFieldsFragment } from "../../graphql/generated";

/** "1540 ± 120", with the provisional flag in words (not only a mark). */
export function RatingText({ rating }: { rating: RatingFieldsFragment }) {
  return (
    <span class="rating" data-rating={rating.value} data-provisional={rating.provisional ? "yes" : "no"}>
      <strong>{rating.value}</strong> <span aria-hidden="true">±</span><span class="sr-only">plus or minus</span> {rating.deviation}
      {rating.provisional && <span class="badge" title="Fewer than 10 rated games">provisional</span>}
    </span>
  );
}
