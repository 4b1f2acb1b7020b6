import { render } from "preact";
import "./style.css";
import "./state/prefs";
import "./state/sound";
import { App } from "./App";

const root = document.getElementById("app");
if (root) render(<App />, root);
