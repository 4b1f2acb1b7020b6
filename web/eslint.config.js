import { readdirSync } from "node:fs";
import js from "@eslint/js";
import { createNodeResolver, importX } from "eslint-plugin-import-x";
import globals from "globals";
import tseslint from "typescript-eslint";

const SOURCE_EXTENSIONS = [".ts", ".tsx", ".js"];
const PAGES = readdirSync(new URL("src/pages", import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

export default tseslint.config(
  { ignores: ["dist", "node_modules", "src/graphql/generated.ts"] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      globals: globals.browser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
      "@typescript-eslint/no-confusing-void-expression": "off",
    },
  },
  {
    // The shape of src (see src/README.md): no import cycle (type-only imports aside: they
    // vanish from the build), shared code never imports a page or App, and no page
    // imports another page.
    files: ["src/**/*.{ts,tsx}"],
    plugins: { "import-x": importX },
    settings: {
      "import-x/extensions": SOURCE_EXTENSIONS,
      "import-x/parsers": { "@typescript-eslint/parser": [".ts", ".tsx"] },
      "import-x/resolver-next": [createNodeResolver({ extensions: SOURCE_EXTENSIONS })],
    },
    rules: {
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
      "import-x/no-restricted-paths": ["error", {
        zones: [
          {
            target: ["./src/components", "./src/live", "./src/state", "./src/server", "./src/lib"],
            from: ["./src/pages", "./src/App.tsx"],
            message: "Shared code does not import a page: move what it needs below pages/.",
          },
          ...PAGES.map((page) => ({
            target: `./src/pages/${page}`,
            from: "./src/pages",
            except: [`./${page}`],
            message: "A page does not import another page: move what both use to components/, state/ or lib/.",
          })),
        ],
      }],
    },
  },
  { files: ["eslint.config.js"], ...tseslint.configs.disableTypeChecked },
);
