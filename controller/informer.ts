/**
 * The controller's informers: core/kube/informer.ts (shared with the API's caches) watching
 * through client-node. Options take the KubeConfig instead of a watch function.
 */
import { Watch, type KubeConfig } from "@kubernetes/client-node";
import {
  Informer as CoreInformer,
  type InformerOptions as CoreOptions,
  type KubernetesObject,
  type WatchFn,
} from "../core/kube/informer.ts";

export { compareResourceVersions, objectKey, sleep, splitKey } from "../core/kube/informer.ts";
export type { ChangeInfo, ChangeKind, KubernetesObject, ListResult } from "../core/kube/informer.ts";

/** client-node's watch as the informer's WatchFn. */
export function kubeWatch(kc: KubeConfig): WatchFn {
  const watch = new Watch(kc);
  return (path, params, onEvent, done) => watch.watch(path, params, onEvent, done);
}

export type InformerOptions<T extends KubernetesObject> = Omit<CoreOptions<T>, "watch"> & { kubeConfig: KubeConfig };

export class Informer<T extends KubernetesObject> extends CoreInformer<T> {
  constructor(o: InformerOptions<T>) {
    const { kubeConfig, ...rest } = o;
    super({ ...rest, watch: kubeWatch(kubeConfig) });
  }
}
