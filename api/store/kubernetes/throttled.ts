/**
 * The admin CLI's Kubernetes clients retry what the apiserver refused with 429 Too Many Requests:
 * API Priority and Fairness shedding load, or a CustomResourceDefinition installed a moment ago
 * whose storage is still initializing (what an operator meets running `folio tenants create` right
 * after `helm install`). As client-go does: wait the answer's Retry-After (1 s without one, at most
 * MAX_WAIT_MS) and send it again, up to MAX_RETRIES times. A 429 is answered before the request is
 * executed, so a create or a delete is as safe to send again as a read.
 *
 * The API server and the controller do not use it: a request they serve fails fast, and the
 * controller's work queue already retries with backoff.
 */
import { ApiException, type KubeConfig } from "@kubernetes/client-node";

export const MAX_RETRIES = 10;
const MAX_WAIT_MS = 10_000;

/** How long a 429 asks to wait: its Retry-After in seconds, else 1 s; at most MAX_WAIT_MS. */
export function retryAfterMs(err: ApiException<unknown>): number {
  const header = Object.entries(err.headers ?? {}).find(([k]) => k.toLowerCase() === "retry-after")?.[1];
  const seconds = Number(header);
  return Math.min(MAX_WAIT_MS, Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 1000);
}

/** `call()`, sent again after each 429 (see above); `first` is its first attempt, when already sent. */
export async function retryThrottled<T>(call: () => Promise<T>, first?: Promise<T>): Promise<T> {
  let attempt = first ?? call();
  for (let retries = 0; ; retries++) {
    try {
      return await attempt;
    } catch (err) {
      if (!(err instanceof ApiException) || err.code !== 429 || retries >= MAX_RETRIES) throw err;
      await new Promise((resolve) => setTimeout(resolve, retryAfterMs(err)));
      attempt = call();
    }
  }
}

/** Makes every API client `kc` makes retry 429s (retryThrottled); returns `kc`. */
export function retryingThrottled(kc: KubeConfig): KubeConfig {
  const make = kc.makeApiClient.bind(kc);
  kc.makeApiClient = (apiClientType) =>
    new Proxy(make(apiClientType), {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]): unknown => {
          const send = (): unknown => (value as (...a: unknown[]) => unknown).apply(target, args);
          const first = send();
          // The API methods answer promises; anything else is passed through as it is.
          return first instanceof Promise ? retryThrottled(send as () => Promise<unknown>, first) : first;
        };
      },
    });
  return kc;
}
