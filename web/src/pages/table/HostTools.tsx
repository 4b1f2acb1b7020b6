import { useState } from "preact/hooks";
import { ReplacementBotField, TurnSecondsField } from "../../components/TableOptions";
import {
  CreateJoinLinkDocument,
  CreateSpectatorLinkDocument,
  InvitePlayerDocument,
  UpdateTableDocument,
  type BotLevel,
  type JoinPolicy,
  type TableFieldsFragment,
  type Visibility,
} from "../../graphql/generated";
import { enumWords } from "../../lib/format";
import { JOIN_POLICIES, turnSecondsOf, VISIBILITIES } from "../../lib/tableOptions";
import { mutate } from "../../server/api";
import { tablePath } from "../../state/router";
import type { Act } from "./act";

/** The host's tools before the game: options (the clock and stand-in bots included),
 * invitations and links. Everyone at the table sees saved options at once (TABLE_UPDATED). */
export function HostTools({ table, act }: { table: TableFieldsFragment; act: Act }) {
  const [name, setName] = useState(table.name ?? "");
  const [visibility, setVisibility] = useState<Visibility>(table.visibility);
  const [joinPolicy, setJoinPolicy] = useState<JoinPolicy>(table.joinPolicy);
  const [spectating, setSpectating] = useState(table.spectating);
  const [turnSeconds, setTurnSeconds] = useState(String(table.turnSeconds));
  const [replacementBot, setReplacementBot] = useState<BotLevel>(table.replacementBot);
  const [invitee, setInvitee] = useState("");
  const [links, setLinks] = useState<{ join?: string; watch?: string }>({});
  const tableId = table.id;
  const linkFor = (code: string): string => new URL(tablePath(tableId, code), location.href).href;

  return (
    <div class="host-tools">
      <form class="panel" onSubmit={(e) => {
        e.preventDefault();
        const policy = JOIN_POLICIES[visibility].includes(joinPolicy) ? joinPolicy : null;
        const input = {
          name: name.trim() || null, visibility, joinPolicy: policy, spectating,
          turnSeconds: turnSecondsOf(turnSeconds), replacementBot,
        };
        void act(() => mutate(UpdateTableDocument, { tableId, input }), "Table updated.");
      }}>
        <h3>Table options</h3>
        <label>Name <input name="name" maxLength={50} value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
        <div class="row">
          <label>Who can see it
            <select value={visibility} onChange={(e) => setVisibility(e.currentTarget.value as Visibility)}>
              {VISIBILITIES.map((v) => <option key={v} value={v}>{enumWords(v)}</option>)}
            </select>
          </label>
          <label>Who can sit
            <select value={joinPolicy} onChange={(e) => setJoinPolicy(e.currentTarget.value as JoinPolicy)}>
              {JOIN_POLICIES[visibility].map((p) => <option key={p} value={p}>{enumWords(p)}</option>)}
            </select>
          </label>
        </div>
        <TurnSecondsField value={turnSeconds} visibility={visibility} onInput={setTurnSeconds} />
        <ReplacementBotField value={replacementBot} onChange={setReplacementBot} />
        <label class="check"><input type="checkbox" checked={spectating} onChange={(e) => setSpectating(e.currentTarget.checked)} /> Allow spectators</label>
        <button type="submit">Save options</button>
      </form>
      <form class="panel" onSubmit={(e) => {
        e.preventDefault();
        const who = invitee.trim();
        void act(() => mutate(InvitePlayerDocument, { tableId, username: who }), `${who} is invited.`);
        setInvitee("");
      }}>
        <h3>Invite</h3>
        <div class="row">
          <label class="grow">Username <input name="invitee" required value={invitee} onInput={(e) => setInvitee(e.currentTarget.value)} /></label>
          <button type="submit">Invite</button>
        </div>
      </form>
      <div class="panel">
        <h3>Links</h3>
        <div class="actions">
          <button type="button" onClick={() => void act(async () => {
            const r = await mutate(CreateJoinLinkDocument, { tableId });
            if (r.data) setLinks((l) => ({ ...l, join: linkFor(r.data.createJoinLink) }));
            return r;
          })}>Create a join link</button>
          <button type="button" onClick={() => void act(async () => {
            const r = await mutate(CreateSpectatorLinkDocument, { tableId });
            if (r.data) setLinks((l) => ({ ...l, watch: linkFor(r.data.createSpectatorLink) }));
            return r;
          })}>Create a spectator link</button>
        </div>
        {links.join && <label>Join link (lets its holder sit) <input readOnly value={links.join} data-link-kind="join" onFocus={(e) => e.currentTarget.select()} /></label>}
        {links.watch && <label>Spectator link (watch only) <input readOnly value={links.watch} data-link-kind="watch" onFocus={(e) => e.currentTarget.select()} /></label>}
      </div>
    </div>
  );
}
