// Display preferences kept in this browser.
import { signal } from "../lib/signal";

const FOUR_COLOUR_KEY = "spades.fourColour";

export const fourColour = signal(localStorage.getItem(FOUR_COLOUR_KEY) === "1");

function applyDeck(on: boolean): void {
  document.documentElement.classList.toggle("four-colour", on);
}
applyDeck(fourColour.value);
fourColour.subscribe((on) => {
  localStorage.setItem(FOUR_COLOUR_KEY, on ? "1" : "0");
  applyDeck(on);
});
