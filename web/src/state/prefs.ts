// Display and sound preferences kept in this browser.
import { signal, type Signal } from "../lib/signal";

/** A yes/no preference stored under `key` ("1" or "0"), off unless stored on. */
function storedFlag(key: string): Signal<boolean> {
  const flag = signal(localStorage.getItem(key) === "1");
  flag.subscribe((on) => localStorage.setItem(key, on ? "1" : "0"));
  return flag;
}

export const fourColour = storedFlag("spades.fourColour");

/** Sounds for the player's turn and won tricks: off until the player turns them on. */
export const soundsOn = storedFlag("spades.sounds");

function applyDeck(on: boolean): void {
  document.documentElement.classList.toggle("four-colour", on);
}
applyDeck(fourColour.value);
fourColour.subscribe(applyDeck);
