// What screen readers hear: the app's one aria-live region renders this signal.
import { signal } from "../lib/signal";

/** The latest sentence for the live region (a game change, a seat taken back, the clock). */
export const announcement = signal("");
