// The table page's actions: each runs a mutation, then the page reloads and tells the
// outcome (an error, or a note of success).

/** What an action answers: a mutation's result, or an error in words. */
export type Outcome = { data?: unknown; error?: string | undefined };

/** Run an action on the table page (its error or `success` note shown after the reload). */
export type Act = (run: () => Promise<Outcome>, success?: string) => Promise<void>;
