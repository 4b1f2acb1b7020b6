import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { GameView } from "../../live/game";
import { HistoryPanel, ScorePanel } from "./Scores";

type Tab = "score" | "hands" | "log" | "chat";
const TABS: readonly [Tab, string][] = [["score", "Score"], ["hands", "Hands"], ["log", "Log"], ["chat", "Chat"]];

/**
 * Beside the felt: the score and last trick, the hands so far, the table's log and chat.
 * A wide screen shows them all; a narrow one shows one at a time, chosen by the buttons
 * above them (the felt and the hand keep the screen).
 */
export function SidePanels(props: { view: GameView; log: ComponentChildren; chat: ComponentChildren }) {
  const [tab, setTab] = useState<Tab>("score");
  const shown = TABS.filter(([name]) => name !== "chat" || props.chat);
  return (
    <div class="side-col side" data-tab={tab}>
      <div class="side-tabs" role="group" aria-label="Table panels">
        {shown.map(([name, words]) => (
          <button key={name} type="button" class="small" aria-pressed={tab === name} aria-controls={`side-${name}`}
            onClick={() => setTab(name)}>{words}</button>
        ))}
      </div>
      <div class="side-panel" id="side-score" data-panel="score"><ScorePanel view={props.view} /></div>
      <div class="side-panel" id="side-hands" data-panel="hands"><HistoryPanel view={props.view} /></div>
      <div class="side-panel" id="side-log" data-panel="log">{props.log}</div>
      {props.chat && <div class="side-panel" id="side-chat" data-panel="chat">{props.chat}</div>}
    </div>
  );
}
