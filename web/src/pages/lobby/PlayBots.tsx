import { useState } from "preact/hooks";
import { AddBotDocument, CreateTableDocument, type BotLevel, type PlayerFieldsFragment, type Seat } from "../../graphql/generated";
import { BOT_LEVELS, botLevelName } from "../../lib/cards";
import { mutate } from "../../server/api";
import { navigate, tablePath } from "../../state/router";

// The player sits North (the host's seat); the bots take the other three.
const BOT_SEATS: readonly Seat[] = ["EAST", "SOUTH", "WEST"];

/**
 * "Play against bots": one click makes a private table without a turn clock, seats three
 * bots of the chosen level (Standard unless changed) and opens it: the game has started.
 */
export function PlayBots({ me }: { me: PlayerFieldsFragment }) {
  const [level, setLevel] = useState<BotLevel>("STANDARD");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const start = async (): Promise<void> => {
    setBusy(true);
    setError(null);
    const created = await mutate(CreateTableDocument, {
      input: {
        name: `${me.username} against the bots`,
        visibility: "PRIVATE",
        joinPolicy: null,
        spectating: false,
        seed: null,
        rated: false,
        turnSeconds: 0,
        replacementBot: level,
      },
    });
    if (created.data === undefined) {
      setBusy(false);
      setError(created.error);
      return;
    }
    const tableId = created.data.createTable.id;
    for (const seat of BOT_SEATS) {
      const added = await mutate(AddBotDocument, { tableId, seat, level });
      if (added.data === undefined) {
        setError(added.error);
        break;
      }
    }
    setBusy(false);
    navigate(tablePath(tableId));
  };

  return (
    <section class="panel play-bots" aria-labelledby="play-bots-title">
      <h2 id="play-bots-title">Play against bots</h2>
      <p class="muted small">A private table, you and three bots: the game starts at once, with no turn clock.</p>
      <div class="row">
        <label>
          Bot level
          <select name="quickBotLevel" value={level} onChange={(e) => setLevel(e.currentTarget.value as BotLevel)}>
            {BOT_LEVELS.map((l) => <option key={l} value={l}>{botLevelName(l)}</option>)}
          </select>
        </label>
        <button type="button" class="primary" data-action="play-bots" disabled={busy} onClick={() => void start()}>
          {busy ? "Starting…" : "Play against bots"}
        </button>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
    </section>
  );
}
