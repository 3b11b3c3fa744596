// Lint as architecture: no floating promises, bounded complexity, no import cycles, and the
// one-way dependency rule of ARCHITECTURE.md (core imports nothing of api/controller/runner).
import tseslint from "typescript-eslint";
import importX, { createNodeResolver } from "eslint-plugin-import-x";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", ".tools/**", "crds/**", "helm/**"] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "import-x": importX },
    settings: {
      // Sources import each other with .ts specifiers (rewritten to .js by tsc); without a resolver
      // that knows them, no-cycle silently sees no imports at all.
      "import-x/resolver-next": [createNodeResolver({ extensions: [".ts", ".js"] })],
      "import-x/extensions": [".ts", ".js"],
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/explicit-module-boundary-types": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      complexity: ["error", 15],
      "max-depth": ["error", 4],
      "import-x/no-cycle": ["error", { maxDepth: 10 }],
    },
  },
  {
    files: ["core/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            "../api/*",
            "../runner/*",
            "../controller/*",
            "**/api/**",
            "**/runner/**",
            "**/controller/**",
            "express",
            "@kubernetes/client-node",
          ],
        },
      ],
    },
  },
  {
    files: ["test/**/*.ts", "bench/**/*.ts", "**/*.test.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-return": "off",
    },
  },
  { files: ["eslint.config.js"], ...tseslint.configs.disableTypeChecked },
  // The dashboard's browser module: plain JavaScript outside the TypeScript program.
  {
    files: ["api/dashboard/assets/**/*.js"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { projectService: false, project: null },
      globals: {
        document: "readonly",
        window: "readonly",
        navigator: "readonly",
        fetch: "readonly",
        setInterval: "readonly",
        Date: "readonly",
      },
    },
  },
);
