import { useState } from "preact/hooks";
import { ReplacementBotField, TurnSecondsField } from "../../components/TableOptions";
import { CreateTableDocument, type BotLevel, type JoinPolicy, type Visibility } from "../../graphql/generated";
import { enumWords } from "../../lib/format";
import { DEFAULT_TURN_SECONDS, JOIN_POLICIES, turnSecondsOf, VISIBILITIES } from "../../lib/tableOptions";
import { mutate } from "../../server/api";
import { navigate, tablePath } from "../../state/router";

/** The create-table form: every option of CreateTableInput. */
export function CreateTable() {
  const [name, setName] = useState("");
  const [visibility, setVisibility] = useState<Visibility>("PUBLIC");
  const [joinPolicy, setJoinPolicy] = useState<JoinPolicy | "">("");
  const [spectating, setSpectating] = useState(true);
  const [seed, setSeed] = useState("");
  const [rated, setRated] = useState(false);
  const [replacementBot, setReplacementBot] = useState<BotLevel>("BASIC");
  const [turnSeconds, setTurnSeconds] = useState(String(DEFAULT_TURN_SECONDS));
  const [error, setError] = useState<string | null>(null);

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    setError(null);
    const policy = joinPolicy && JOIN_POLICIES[visibility].includes(joinPolicy) ? joinPolicy : null;
    const result = await mutate(CreateTableDocument, {
      input: {
        name: name.trim() || null,
        visibility,
        joinPolicy: policy,
        spectating,
        seed: seed.trim() === "" ? null : Number(seed),
        rated,
        turnSeconds: turnSecondsOf(turnSeconds),
        replacementBot,
      },
    });
    if (result.data) navigate(tablePath(result.data.createTable.id));
    else setError(result.error);
  };

  return (
    <form class="panel create" onSubmit={(e) => void submit(e)} aria-labelledby="create-title">
      <h2 id="create-title">New table</h2>
      <label>
        Name <span class="muted">(optional)</span>
        <input name="name" maxLength={50} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <div class="row">
        <label>
          Who can see it
          <select name="visibility" value={visibility}
            onChange={(e) => setVisibility(e.currentTarget.value as Visibility)}>
            {VISIBILITIES.map((v) => <option value={v} key={v}>{enumWords(v)}</option>)}
          </select>
        </label>
        <label>
          Who can sit
          <select name="joinPolicy" value={joinPolicy}
            onChange={(e) => setJoinPolicy(e.currentTarget.value as JoinPolicy | "")}>
            <option value="">Most open allowed</option>
            {JOIN_POLICIES[visibility].map((p) => <option value={p} key={p}>{enumWords(p)}</option>)}
          </select>
        </label>
      </div>
      <TurnSecondsField value={turnSeconds} visibility={visibility} onInput={setTurnSeconds} />
      <label class="check">
        <input type="checkbox" name="spectating" checked={spectating}
          onChange={(e) => setSpectating(e.currentTarget.checked)} />
        Allow spectators
      </label>
      <label class="check">
        <input type="checkbox" name="rated" checked={rated} aria-describedby="rated-hint"
          onChange={(e) => setRated(e.currentTarget.checked)} />
        Rated game
      </label>
      <p id="rated-hint" class="muted small">A rated game is for four people (no bots) and changes their ratings.</p>
      <details>
        <summary>Advanced</summary>
        <ReplacementBotField value={replacementBot} onChange={setReplacementBot} />
        <label>
          Deal seed <span class="muted">(only on servers that allow seeded tables)</span>
          <input name="seed" inputMode="numeric" pattern="-?[0-9]*" value={seed}
            onInput={(e) => setSeed(e.currentTarget.value)} />
        </label>
      </details>
      {error && <p class="error" role="alert">{error}</p>}
      <button type="submit" class="primary">Create table</button>
    </form>
  );
}
