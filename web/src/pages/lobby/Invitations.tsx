import { useEffect, useState } from "preact/hooks";
import { DeclineInvitationDocument, SocialDocument, type SocialQuery } from "../../graphql/generated";
import { useSignal } from "../../lib/signal";
import { mutate, query } from "../../server/api";
import { navigate, tablePath } from "../../state/router";
import { socialTick } from "../../state/social";

/** The invitations waiting for the player (none: nothing shown), each to open or decline. */
export function Invitations() {
  const tick = useSignal(socialTick);
  const [invites, setInvites] = useState<SocialQuery["invitations"]>([]);
  useEffect(() => {
    void query(SocialDocument, {}).then((r) => r.data && setInvites(r.data.invitations));
  }, [tick]);
  if (invites.length === 0) return null;
  const decline = async (id: string): Promise<void> => {
    const result = await mutate(DeclineInvitationDocument, { invitationId: id });
    if (result.data) setInvites((old) => old.filter((i) => i.id !== id));
  };
  return (
    <section class="panel" aria-labelledby="invites-title">
      <h2 id="invites-title">Invitations</h2>
      <ul class="plain">
        {invites.map((invite) => (
          <li key={invite.id} class="invite">
            {invite.from.username} invited you to {invite.table.name ?? "a table"}.{" "}
            <button type="button" class="primary small" onClick={() => navigate(tablePath(invite.table.id))}>Open</button>{" "}
            <button type="button" class="small" onClick={() => void decline(invite.id)}>Decline</button>
          </li>
        ))}
      </ul>
    </section>
  );
}
