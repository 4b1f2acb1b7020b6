// Friends, requests, invitations and blocks live on the server; every screen that lists
// them reads them again when `socialTick` moves.
import { BlockPlayerDocument, type PlayerFieldsFragment } from "../graphql/generated";
import { signal } from "../lib/signal";
import { mutate } from "../server/api";

/** Bumped by each notification, a reconnect and one's own block, so social lists refetch. */
export const socialTick = signal(0);

/** Block a player (also ends a friendship); the Friends page lists whom you blocked. */
export async function block(player: PlayerFieldsFragment): Promise<string | null> {
  const result = await mutate(BlockPlayerDocument, { playerId: player.id });
  if (result.error) return result.error;
  socialTick.value += 1;
  return null;
}
