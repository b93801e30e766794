import { defineConfig } from "vitest/config";

// Under CI, a JSON report is written beside the usual output so that .ci/run can
// print the totals line ("N passed, N failed").
export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    testTimeout: 60_000,
    reporters: process.env.CI ? ["default", "json"] : ["default"],
    outputFile: process.env.CI ? { json: ".vitest-report.json" } : undefined,
  },
});
