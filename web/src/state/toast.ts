// The short notice shown at the top of every page (a friend request, an invitation...).
import { signal } from "../lib/signal";

/** The notice on screen, or null; it clears itself after a few seconds. */
export const toast = signal<string | null>(null);
