/**
 * An in-memory stand-in for the API server behind controller/apply.ts's KubeClient, for the
 * pure tests that need its optimistic concurrency: PdfJob writes must carry the stored object's
 * resourceVersion (409 Conflict otherwise, as for a write from a stale informer cache), a PdfJob
 * is gone once it is being deleted and has no finalizer left, and writes to a gone one are 404.
 * Jobs and events are only recorded.
 */
import { ApiException } from "@kubernetes/client-node";
import type { KubeClient } from "../../controller/apply.ts";
import type { PdfJob } from "../../core/schemas/pdfjob.ts";

const keyOf = (pj: PdfJob): string => `${pj.metadata.namespace ?? "default"}/${pj.metadata.name}`;

export class FakeKube {
  readonly #objects = new Map<string, PdfJob>();
  #rv = 0;
  /** What was done, in order ("replaceStatus Succeeded", "409 replaceStatus", "createJob …"). */
  readonly calls: string[] = [];

  /** Stores `pj` as the API server would hand it out (a new resourceVersion); returns it. */
  put(pj: PdfJob): PdfJob {
    const stored = { ...pj, metadata: { ...pj.metadata, resourceVersion: String(++this.#rv) } };
    this.#objects.set(keyOf(stored), stored);
    return stored;
  }

  get(key: string): PdfJob | undefined {
    return this.#objects.get(key);
  }

  /** A DELETE: a PdfJob with finalizers gets its deletionTimestamp and stays until they are removed. */
  delete(key: string, at: string): void {
    const pj = this.#objects.get(key);
    if (!pj) return;
    if (pj.metadata.finalizers?.length) this.put({ ...pj, metadata: { ...pj.metadata, deletionTimestamp: at } });
    else this.#objects.delete(key);
  }

  /** The stored object `pj` may write to: 404 when gone, 409 when `pj` is not its current version. */
  #current(op: string, pj: PdfJob): PdfJob {
    const current = this.#objects.get(keyOf(pj));
    const code = !current ? 404 : current.metadata.resourceVersion !== pj.metadata.resourceVersion ? 409 : null;
    if (code !== null) {
      this.calls.push(`${code} ${op}`);
      throw new ApiException(code, code === 404 ? "NotFound" : "Conflict", "{}", {});
    }
    return current!;
  }

  readonly client: KubeClient = {
    createJob: (_ns, job) => {
      this.calls.push(`createJob ${job.metadata?.name}`);
      return Promise.resolve();
    },
    deleteJobForeground: (_ns, name) => {
      this.calls.push(`deleteJob ${name}`);
      return Promise.resolve();
    },
    replaceStatus: (pj, status) => {
      const current = this.#current("replaceStatus", pj);
      this.calls.push(`replaceStatus ${status.phase}`);
      return Promise.resolve(this.put({ ...current, status }));
    },
    setFinalizers: (pj, finalizers) => {
      const current = this.#current("setFinalizers", pj);
      this.calls.push(`setFinalizers [${finalizers.join(",")}]`);
      const next = this.put({ ...current, metadata: { ...current.metadata, finalizers } });
      if (next.metadata.deletionTimestamp && finalizers.length === 0) this.#objects.delete(keyOf(next));
      return Promise.resolve(next);
    },
    deletePdfJob: (namespace, name) => {
      this.calls.push(`deletePdfJob ${name}`);
      this.delete(`${namespace}/${name}`, new Date().toISOString());
      return Promise.resolve();
    },
    deleteSecret: (_ns, name) => {
      this.calls.push(`deleteSecret ${name}`);
      return Promise.resolve();
    },
    createEvent: () => Promise.resolve(),
  };
}
