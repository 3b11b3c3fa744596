/**
 * The Kubernetes calls of the API's Kubernetes backend, and nothing else: PdfJobs in one
 * namespace and the Secrets they own (created with their owner, never read or changed: the
 * garbage collector deletes them with it). A 404 is an answer here (null / false), not an error;
 * every other failure is thrown, and the client gets `500 internal_error` (API.md). Reads go
 * through the informer it makes (api/store/kubernetes/pdfjob-cache.ts), not through here.
 */
import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions, Watch } from "@kubernetes/client-node";
import type { ListResult, WatchFn } from "../../core/kube/informer.ts";
import { shareConnections } from "../../core/net/kube-connections.ts";
import {
  PDFJOB_ANNOTATIONS,
  PDFJOB_API_VERSION,
  PDFJOB_GROUP,
  PDFJOB_KIND,
  PDFJOB_PLURAL,
  PDFJOB_VERSION,
  type PdfJob,
} from "../../core/schemas/pdfjob.ts";

const CRD = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: PDFJOB_PLURAL };
const PAGE = 500;

export const isStatus = (err: unknown, code: number): boolean => err instanceof ApiException && err.code === code;

/** client-node's watch as the informer's WatchFn (core/kube/informer.ts). */
export function kubeWatch(kc: KubeConfig): WatchFn {
  const watch = new Watch(kc);
  return (path, params, onEvent, done) => watch.watch(path, params, onEvent, done);
}

/** Every item of a paged list (one snapshot: continue tokens keep the first page's resourceVersion). */
export async function listAll<T>(
  page: (cont: string | undefined) => Promise<{ items: T[]; metadata?: { continue?: string; resourceVersion?: string } }>,
): Promise<ListResult<T>> {
  const items: T[] = [];
  let resourceVersion = "";
  let cont: string | undefined;
  do {
    const res = await page(cont);
    items.push(...res.items);
    resourceVersion ||= res.metadata?.resourceVersion ?? "";
    cont = res.metadata?.continue || undefined;
  } while (cont);
  return { items, resourceVersion };
}

/** KUBECONFIG when set, else the pod's service account. */
export function loadKubeConfig(kubeconfig: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else kc.loadFromCluster();
  return kc;
}

export class PdfJobClient {
  readonly namespace: string;
  readonly #custom: CustomObjectsApi;
  readonly #core: CoreV1Api;

  constructor(kc: KubeConfig, namespace: string) {
    shareConnections(kc);
    this.namespace = namespace;
    this.#custom = kc.makeApiClient(CustomObjectsApi);
    this.#core = kc.makeApiClient(CoreV1Api);
  }

  async create(metadata: PdfJob["metadata"], spec: PdfJob["spec"]): Promise<PdfJob> {
    const body = { apiVersion: PDFJOB_API_VERSION, kind: PDFJOB_KIND, metadata: { ...metadata, namespace: this.namespace }, spec };
    return (await this.#custom.createNamespacedCustomObject({ ...CRD, namespace: this.namespace, body })) as PdfJob;
  }

  async get(name: string): Promise<PdfJob | null> {
    try {
      return (await this.#custom.getNamespacedCustomObject({ ...CRD, namespace: this.namespace, name })) as PdfJob;
    } catch (err) {
      if (isStatus(err, 404)) return null;
      throw err;
    }
  }

  /** Every PdfJob of the namespace, for the informer (pages of 500, one snapshot). */
  list(): Promise<ListResult<PdfJob>> {
    return listAll(
      async (cont) =>
        (await this.#custom.listNamespacedCustomObject({
          ...CRD,
          namespace: this.namespace,
          limit: PAGE,
          ...(cont ? { _continue: cont } : {}),
        })) as { items: PdfJob[]; metadata?: { continue?: string; resourceVersion?: string } },
    );
  }

  /** The watch path of the namespace's PdfJobs. */
  get watchPath(): string {
    return `/apis/${PDFJOB_GROUP}/${PDFJOB_VERSION}/namespaces/${this.namespace}/${PDFJOB_PLURAL}`;
  }

  /**
   * The PdfJobs matching a label selector, read through to the apiserver (a consistent list,
   * served from its watch cache): what a replica does for an id its own cache does not know yet.
   */
  async listByLabel(labelSelector: string): Promise<PdfJob[]> {
    const res = (await this.#custom.listNamespacedCustomObject({ ...CRD, namespace: this.namespace, labelSelector, limit: 50 })) as {
      items: PdfJob[];
    };
    return res.items;
  }

  /**
   * Takes back a PdfJob nobody was told about (refused at the cap, or its Secret failed): marked
   * so that the controller runs nothing, sends no webhook and holds no idempotency key for it,
   * then deleted.
   */
  async reject(name: string, reason: string): Promise<void> {
    try {
      await this.#custom.patchNamespacedCustomObject(
        { ...CRD, namespace: this.namespace, name, body: { metadata: { annotations: { [PDFJOB_ANNOTATIONS.rejected]: reason } } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
    } catch (err) {
      if (isStatus(err, 404)) return;
      throw err;
    }
    await this.delete(name);
  }

  /** Deletes a PdfJob (its finalizer lets the controller cancel and clean up first); false when absent. */
  async delete(name: string): Promise<boolean> {
    try {
      await this.#custom.deleteNamespacedCustomObject({ ...CRD, namespace: this.namespace, name, propagationPolicy: "Background" });
      return true;
    } catch (err) {
      if (isStatus(err, 404)) return false;
      throw err;
    }
  }

  /**
   * Sets annotations, guarded by the object's resourceVersion: false when the PdfJob changed since
   * it was read (409) — the caller reads it again — or is gone.
   */
  async annotate(pj: PdfJob, annotations: Record<string, string>): Promise<boolean> {
    try {
      await this.#custom.patchNamespacedCustomObject(
        {
          ...CRD,
          namespace: this.namespace,
          name: pj.metadata.name,
          body: { metadata: { annotations, resourceVersion: pj.metadata.resourceVersion } },
        },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
      return true;
    } catch (err) {
      if (isStatus(err, 409) || isStatus(err, 404)) return false;
      throw err;
    }
  }

  /**
   * Creates the PdfJob's Secret, owned by it from the start: the garbage collector deletes it with
   * the PdfJob, and no Secret exists without its job. (The runner pod and the webhook sender wait
   * for it like for any missing reference; it follows the PdfJob within milliseconds.)
   */
  async createOwnedSecret(owner: PdfJob, labels: Record<string, string>, data: Record<string, string>): Promise<void> {
    const ownerReferences = [
      {
        apiVersion: PDFJOB_API_VERSION,
        kind: PDFJOB_KIND,
        name: owner.metadata.name,
        uid: owner.metadata.uid ?? "",
        controller: true,
        blockOwnerDeletion: true,
      },
    ];
    const body = {
      metadata: { name: owner.metadata.name, namespace: this.namespace, labels, ownerReferences },
      type: "Opaque",
      stringData: data,
    };
    await this.#core.createNamespacedSecret({ namespace: this.namespace, body });
  }

  /** Whether the Secret `name` exists in this namespace (one GET; its data is not kept). */
  async secretExists(name: string): Promise<boolean> {
    try {
      await this.#core.readNamespacedSecret({ namespace: this.namespace, name });
      return true;
    } catch (err) {
      if (isStatus(err, 404)) return false;
      throw err;
    }
  }

  /** The apiserver answers and the PdfJob resource exists. */
  async ready(): Promise<boolean> {
    try {
      await this.#custom.listNamespacedCustomObject({ ...CRD, namespace: this.namespace, limit: 1 });
      return true;
    } catch {
      return false;
    }
  }
}
