/**
 * The tests' own saver for `--saver MODULE:EXPORT`: LangGraph's MemorySaver kept in a JSON file, so that the
 * test process and the command's process see the same threads. It is read through the portable
 * `list({})` path (it is neither the SQLite nor the PostgreSQL saver).
 *
 * Options: `file` (required); `delayMs` slows every read, so a test can stop a run half way.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  MemorySaver,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";

export interface FileSaverOptions {
  file: string;
  delayMs?: number;
}

type Tree = Record<string, unknown>;

/** Uint8Arrays as {"$bytes": base64} so the stores survive JSON. */
function encode(value: unknown): unknown {
  if (value instanceof Uint8Array) return { $bytes: Buffer.from(value).toString("base64") };
  if (Array.isArray(value)) return value.map(encode);
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encode(v)]));
  return value;
}

function decode(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decode);
  if (value && typeof value === "object") {
    const bytes = (value as { $bytes?: unknown }).$bytes;
    if (typeof bytes === "string") return new Uint8Array(Buffer.from(bytes, "base64"));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, decode(v)]));
  }
  return value;
}

export class FileSaver extends MemorySaver {
  constructor(private readonly options: FileSaverOptions) {
    super();
    if (existsSync(options.file)) {
      const { storage, writes } = decode(JSON.parse(readFileSync(options.file, "utf8"))) as {
        storage: Tree;
        writes: Tree;
      };
      Object.assign(this.storage, storage);
      Object.assign(this.writes, writes);
    }
  }

  private save(): void {
    const temporary = `${this.options.file}.tmp`;
    writeFileSync(temporary, JSON.stringify(encode({ storage: this.storage, writes: this.writes })));
    renameSync(temporary, this.options.file);
  }

  private async pause(): Promise<void> {
    if (this.options.delayMs) await new Promise((resolve) => setTimeout(resolve, this.options.delayMs));
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    await this.pause();
    return super.getTuple(config);
  }

  override async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    for await (const tuple of super.list(config, options)) {
      await this.pause();
      yield tuple;
    }
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
  ): Promise<RunnableConfig> {
    const result = await super.put(config, checkpoint, metadata);
    this.save();
    return result;
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    await super.putWrites(config, writes, taskId);
    this.save();
  }

  override async deleteThread(threadId: string): Promise<void> {
    await super.deleteThread(threadId);
    this.save();
  }
}

/** The factory the command is pointed at: `--saver ./test/threads/support/file-saver.ts:createFileSaver`. */
export function createFileSaver(options: FileSaverOptions): FileSaver {
  if (typeof options?.file !== "string") throw new TypeError("createFileSaver: options.file is required");
  return new FileSaver(options);
}
