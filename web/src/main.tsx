import { render } from "preact";
import "./style.css";
import "./prefs";
import { App } from "./views/App";

const root = document.getElementById("app");
if (root) render(<App />, root);
