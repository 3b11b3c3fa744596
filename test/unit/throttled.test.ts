/**
 * The admin CLI's clients retry a 429 (api/store/kubernetes/throttled.ts): after Retry-After, at
 * most MAX_RETRIES times, and nothing else. Pure logic: the client is a stand-in.
 */
import { ApiException, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { MAX_RETRIES, retryAfterMs, retryingThrottled } from "../../api/store/kubernetes/throttled.ts";

const refusal = (code: number, retryAfter?: string): ApiException<string> =>
  new ApiException(code, "refused", "", retryAfter === undefined ? {} : { "Retry-After": retryAfter });

/** A KubeConfig whose API clients answer from `answers`, in turn, counting the calls. */
function clientAnswering(answers: (() => unknown)[]): { api: CoreV1Api; calls: () => number } {
  let calls = 0;
  const kc = new KubeConfig();
  kc.makeApiClient = (() => ({
    readNamespace: () => {
      const answer = answers[Math.min(calls++, answers.length - 1)]!;
      return Promise.resolve().then(answer);
    },
    basePath: "https://example.invalid",
  })) as unknown as KubeConfig["makeApiClient"];
  return { api: retryingThrottled(kc).makeApiClient(CoreV1Api), calls: () => calls };
}

describe("retrying 429s in the admin CLI", () => {
  it("sends a refused request again after its Retry-After, and answers what the retry got", async () => {
    const { api, calls } = clientAnswering([
      () => {
        throw refusal(429, "0");
      },
      () => {
        throw refusal(429, "0");
      },
      () => ({ metadata: { name: "folio" } }),
    ]);
    expect(await api.readNamespace({ name: "folio" })).toEqual({ metadata: { name: "folio" } });
    expect(calls()).toBe(3);
  });

  it("gives up after MAX_RETRIES retries with the 429 itself", async () => {
    const { api, calls } = clientAnswering([
      () => {
        throw refusal(429, "0");
      },
    ]);
    await expect(api.readNamespace({ name: "folio" })).rejects.toMatchObject({ code: 429 });
    expect(calls()).toBe(MAX_RETRIES + 1);
  });

  it("never retries another error", async () => {
    const { api, calls } = clientAnswering([
      () => {
        throw refusal(403);
      },
    ]);
    await expect(api.readNamespace({ name: "folio" })).rejects.toMatchObject({ code: 403 });
    expect(calls()).toBe(1);
  });

  it("passes properties that are not methods through", () => {
    expect(clientAnswering([() => null]).api).toHaveProperty("basePath", "https://example.invalid");
  });

  it("waits what Retry-After says, 1 s without it, never more than 10 s", () => {
    expect(retryAfterMs(refusal(429, "2"))).toBe(2000);
    expect(retryAfterMs(refusal(429))).toBe(1000);
    expect(retryAfterMs(refusal(429, "soon"))).toBe(1000);
    expect(retryAfterMs(refusal(429, "3600"))).toBe(10_000);
  });
});
