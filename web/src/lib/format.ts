// Server values in words for the screen.

/** An enum value as words: "FRIENDS_ONLY" -> "Friends only". */
export const enumWords = (value: string): string => value.charAt(0) + value.slice(1).toLowerCase().replace(/_/g, " ");
