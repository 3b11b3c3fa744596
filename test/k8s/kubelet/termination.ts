/**
 * The termination message, read like the kubelet reads it (pkg/kubelet/kuberuntime: the file at
 * terminationMessagePath, at most 4096 bytes; with policy FallbackToLogsOnError and a failed
 * container whose file is empty, the last 80 lines — at most 2048 bytes — of its log).
 */
import { readFileSync } from "node:fs";

const MAX_MESSAGE_BYTES = 4096;
const FALLBACK_LOG_LINES = 80;
const FALLBACK_LOG_BYTES = 2048;

export function readTerminationMessage(messageFile: string, logFile: string, policy: string | undefined, exitCode: number): string {
  let message = "";
  try {
    message = readFileSync(messageFile).subarray(0, MAX_MESSAGE_BYTES).toString("utf8");
  } catch {
    // No file: the process removed it; same as empty.
  }
  if (message === "" && policy === "FallbackToLogsOnError" && exitCode !== 0) {
    try {
      const tail = readFileSync(logFile, "utf8")
        .split("\n")
        .slice(-FALLBACK_LOG_LINES - 1)
        .join("\n");
      const bytes = Buffer.from(tail, "utf8");
      message = bytes.subarray(Math.max(0, bytes.length - FALLBACK_LOG_BYTES)).toString("utf8");
    } catch {
      // No log yet.
    }
  }
  return message;
}
