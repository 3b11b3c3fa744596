/**
 * One keep-alive connection pool per Kubernetes client configuration.
 *
 * @kubernetes/client-node 2.0 builds a new undici Agent — a new connection pool — for every API
 * request (KubeConfig.applySecurityAuthentication → createDispatcher), so every call pays a TCP
 * and TLS handshake on both ends. Measured on the 2-core machine: 195–247 GETs/s at 2.6–3.1 ms of
 * client CPU each, against 632–752/s at 0.7–0.8 ms with one shared pool; the controller's
 * backlog rate is bound by it. This wraps a KubeConfig so that the first dispatcher it makes is
 * kept and every later request uses it. Bearer tokens (service-account tokens, refreshed from
 * their file) travel in headers, which are still applied per request; the TLS client identity is
 * the one of the first request — so a kubeconfig whose exec plugin rotates *client certificates*
 * is not supported (Folio runs with service-account tokens in a cluster, kubeconfig files in tests).
 *
 * It is typed structurally so that core/ needs nothing of the Kubernetes client (ARCHITECTURE.md);
 * the API and the controller call it on the KubeConfig they load.
 */

/** The part of undici's Dispatcher used here. */
interface ClosableDispatcher {
  close(): Promise<void>;
}

/** The part of client-node's RequestContext used here. */
interface DispatcherContext<D extends ClosableDispatcher> {
  getDispatcher(): D | undefined;
  setDispatcher(dispatcher: D): void;
}

/** The part of client-node's KubeConfig used here. */
export interface SecurityApplier<D extends ClosableDispatcher> {
  applySecurityAuthentication(context: DispatcherContext<D>): Promise<void>;
}

/** Makes `kc` reuse one connection pool for all its requests; returns `kc`. */
export function shareConnections<D extends ClosableDispatcher, K extends SecurityApplier<D>>(kc: K): K {
  const apply = kc.applySecurityAuthentication.bind(kc);
  let shared: D | undefined;
  kc.applySecurityAuthentication = async (context: DispatcherContext<D>): Promise<void> => {
    await apply(context);
    const fresh = context.getDispatcher();
    if (fresh === undefined || fresh === shared) return;
    if (shared === undefined) {
      shared = fresh;
      return;
    }
    // Made for this request and never used: nothing is connected yet.
    void fresh.close().catch(() => undefined);
    context.setDispatcher(shared);
  };
  return kc;
}
