/**
 * JSON documents kept in Secrets and ConfigMaps of one namespace, for the dashboard's stores in
 * Kubernetes mode: read straight from the apiserver (dashboard traffic is small), written with
 * optimistic concurrency — every update replaces the object at the resourceVersion it was read
 * at, and a 409 Conflict reads and applies the change again — so any number of API replicas can
 * write the same document without losing an update (Kubernetes API conventions, "Concurrency
 * Control and Consistency").
 */
import { createHash } from "node:crypto";
import { ApiException, CoreV1Api, type KubeConfig, type V1ConfigMap, type V1Secret } from "@kubernetes/client-node";
import { shareConnections } from "../../core/net/kube-connections.ts";

export type Kind = "Secret" | "ConfigMap";
const KEY = "doc.json";
const MANAGED = { "app.kubernetes.io/managed-by": "folio", "folio.dev/part-of": "dashboard" };

const isStatus = (err: unknown, code: number): boolean => err instanceof ApiException && err.code === code;

/** A label value (≤ 63 characters of [A-Za-z0-9_.-]) standing for any string. */
export const labelHash = (text: string, length = 40): string => createHash("sha256").update(text, "utf8").digest("hex").slice(0, length);

export class JsonObjects {
  readonly namespace: string;
  readonly #core: CoreV1Api;

  constructor(kc: KubeConfig, namespace: string) {
    this.namespace = namespace;
    this.#core = shareConnections(kc).makeApiClient(CoreV1Api);
  }

  #decode<T>(kind: Kind, o: V1Secret | V1ConfigMap): T {
    const raw =
      kind === "Secret"
        ? Buffer.from((o as V1Secret).data?.[KEY] ?? "", "base64").toString("utf8")
        : ((o as V1ConfigMap).data?.[KEY] ?? "");
    return JSON.parse(raw) as T;
  }

  #body(kind: Kind, name: string, labels: Record<string, string>, doc: unknown, resourceVersion?: string): V1Secret & V1ConfigMap {
    const text = JSON.stringify(doc);
    const metadata = {
      name,
      namespace: this.namespace,
      labels: { ...MANAGED, ...labels },
      ...(resourceVersion ? { resourceVersion } : {}),
    };
    return kind === "Secret"
      ? { apiVersion: "v1", kind, metadata, type: "Opaque", data: { [KEY]: Buffer.from(text).toString("base64") } }
      : { apiVersion: "v1", kind, metadata, data: { [KEY]: text } };
  }

  async get<T>(kind: Kind, name: string): Promise<{ doc: T; resourceVersion: string } | null> {
    try {
      const o =
        kind === "Secret"
          ? await this.#core.readNamespacedSecret({ name, namespace: this.namespace })
          : await this.#core.readNamespacedConfigMap({ name, namespace: this.namespace });
      return { doc: this.#decode<T>(kind, o), resourceVersion: o.metadata?.resourceVersion ?? "" };
    } catch (err) {
      if (isStatus(err, 404)) return null;
      throw err;
    }
  }

  async list<T>(kind: Kind, labelSelector: string): Promise<{ name: string; doc: T }[]> {
    const items =
      kind === "Secret"
        ? (await this.#core.listNamespacedSecret({ namespace: this.namespace, labelSelector })).items
        : (await this.#core.listNamespacedConfigMap({ namespace: this.namespace, labelSelector })).items;
    return items.map((o) => ({ name: o.metadata?.name ?? "", doc: this.#decode<T>(kind, o) }));
  }

  /** Creates the object; false when one of that name exists already. */
  async create(kind: Kind, name: string, labels: Record<string, string>, doc: unknown): Promise<boolean> {
    const body = this.#body(kind, name, labels, doc);
    try {
      if (kind === "Secret") await this.#core.createNamespacedSecret({ namespace: this.namespace, body });
      else await this.#core.createNamespacedConfigMap({ namespace: this.namespace, body });
      return true;
    } catch (err) {
      if (isStatus(err, 409)) return false;
      throw err;
    }
  }

  /**
   * Applies `change` to the document (creating it from `initial` when missing) and writes it at the
   * version it read, retrying on a conflict. `change` returns the new document, or null to write
   * nothing; the result is what was written (or read, for null).
   */
  async update<T>(
    kind: Kind,
    name: string,
    labels: Record<string, string>,
    initial: (() => T) | null,
    change: (doc: T) => T | null,
  ): Promise<T | null> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const cur = await this.get<T>(kind, name);
      if (!cur && !initial) return null;
      const next = change(cur ? cur.doc : initial!());
      if (next === null) return cur ? cur.doc : null;
      try {
        if (!cur) {
          if (await this.create(kind, name, labels, next)) return next;
          continue; // someone created it first: read theirs and apply again
        }
        const body = this.#body(kind, name, labels, next, cur.resourceVersion);
        if (kind === "Secret") await this.#core.replaceNamespacedSecret({ name, namespace: this.namespace, body });
        else await this.#core.replaceNamespacedConfigMap({ name, namespace: this.namespace, body });
        return next;
      } catch (err) {
        if (!isStatus(err, 409)) throw err;
      }
    }
    throw new Error(`${kind} ${name}: too many conflicting updates`);
  }
}
