import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { PlayerLink } from "../../components/PlayerLink";
import {
  AddBotDocument,
  JoinTableDocument,
  KickPlayerDocument,
  SendFriendRequestDocument,
  TransferHostDocument,
  type BotLevel,
  type PlayerFieldsFragment,
  type Seat,
  type TableFieldsFragment,
} from "../../graphql/generated";
import { BOT_LEVELS, SEATS, botLevelName, botName, seatName } from "../../lib/cards";
import type { GameView } from "../../live/game";
import { connectedIn, type Presence } from "../../live/presence";
import { mutate } from "../../server/api";
import { block } from "../../state/social";
import type { Act, Outcome } from "./act";
import { HostTools } from "./HostTools";
import { PresenceTag } from "./Presence";

/** Before the game: the four seats (who sits, who is connected), sitting down, and the
 * host's tools. */
export function WaitingRoom(props: {
  table: TableFieldsFragment;
  view: GameView;
  me: PlayerFieldsFragment;
  mySeat: Seat | null;
  code: string | null;
  presence: Presence;
  act: Act;
  onLeave: () => void;
  children?: ComponentChildren;
}) {
  const { table, view, me, mySeat, code, presence, act } = props;
  const [botLevel, setBotLevel] = useState<BotLevel>("BASIC");
  const tableId = table.id;
  const isHost = table.host.id === me.id;
  const addBot = async (seat: Seat): Promise<Outcome> => {
    const result = await mutate(AddBotDocument, { tableId, seat, level: botLevel });
    // The server refuses bots at a rated table (BAD_USER_INPUT): say why in the table's words.
    if (result.error !== undefined && table.rated && result.code === "BAD_USER_INPUT") {
      return { error: "A rated table is for four people: bots cannot sit here. Invite players instead." };
    }
    return result;
  };

  return (
    <section class="panel waiting" aria-labelledby="seats-title">
      <h2 id="seats-title">Seats</h2>
      <p class="muted">The game starts when all four seats are filled.
        {table.rated ? " This game is rated: four people, no bots." : ""}</p>
      {isHost && (
        <label class="inline">
          Level of the bots you add{" "}
          <select name="botLevel" value={botLevel} onChange={(e) => setBotLevel(e.currentTarget.value as BotLevel)}>
            {BOT_LEVELS.map((level) => <option key={level} value={level}>{botLevelName(level)}</option>)}
          </select>
        </label>
      )}
      <ul class="plain seats-waiting">
        {SEATS.map((seat: Seat) => {
          const s = view.seats.find((x) => x.seat === seat);
          const human = s?.playerId && !s.isBot ? { id: s.playerId, username: s.username ?? "" } : null;
          return (
            <li key={seat} data-seat={seat}>
              <span class="seat-label">{seatName(seat)}</span>
              <span class="grow">{s?.playerId ? (human ? <PlayerLink username={human.username} /> : botName(s.botLevel)) : <span class="muted">empty</span>}
                {human?.id === me.id && <span class="badge">you</span>}
                {human?.id === table.host.id && <span class="badge">host</span>}
                {human && <> <PresenceTag connected={connectedIn(presence, seat, human.id)} /></>}
              </span>
              <span class="actions">
                {!s?.playerId && !mySeat && (
                  <button type="button" class="small primary" onClick={() => void act(() => mutate(JoinTableDocument, { tableId, seat, code }))}>
                    Sit here
                  </button>
                )}
                {!s?.playerId && isHost && (
                  <button type="button" class="small" aria-label={`Add a bot ${seatName(seat)}`}
                    onClick={() => void act(() => addBot(seat))}>
                    Add bot
                  </button>
                )}
                {human && human.id !== me.id && isHost && (
                  <>
                    <button type="button" class="small" onClick={() => void act(() => mutate(TransferHostDocument, { tableId, playerId: human.id }), `${human.username} is now the host.`)}>Make host</button>
                    <button type="button" class="small danger" onClick={() => void act(() => mutate(KickPlayerDocument, { tableId, playerId: human.id }))}>Kick</button>
                  </>
                )}
                {human && human.id !== me.id && (
                  <>
                    <button type="button" class="small" onClick={() => void act(() => mutate(SendFriendRequestDocument, { username: human.username }), `Friend request sent to ${human.username}.`)}>Add friend</button>
                    <button type="button" class="small danger" onClick={() => void act(async () => ({ error: (await block(human)) ?? undefined }), `${human.username} is blocked.`)}>Block</button>
                  </>
                )}
              </span>
            </li>
          );
        })}
      </ul>
      {mySeat && <button type="button" onClick={props.onLeave}>Leave table</button>}
      {isHost && <HostTools table={table} act={act} />}
      {props.children}
    </section>
  );
}
