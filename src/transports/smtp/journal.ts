/**
 * The SMTP journal (SMTP_JOURNAL): an SMTP server cannot be asked what it received, so the smtp transport notes
 * each message that has a CustomID as it goes, one JSON line per step, appended before the step's effect:
 *
 *   attempt   before MAIL FROM            nothing reached the server yet
 *   data      when the body starts to go  the server may have it from here on
 *   result    after the server's answer   the message's result entry (accepted or refused)
 *
 * After a crash the last line of a CustomID says what became of it: a result is the result; `data` without one
 * is delivery unknown; `attempt` alone, or no line, means it never went out (safe to send again).
 */
import { appendFileSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { ChainmailError } from "../../core/errors.js";
import { parseJson, stringifyJson } from "../../core/json.js";
import type { MessageResult } from "../../schemas/email.js";
import { deliveryUnknownResult, notSentResult } from "../outcome.js";

type Step = { step: "attempt" | "data" } | { step: "result"; result: MessageResult };

export class SmtpJournal {
  private ready: Promise<unknown> | undefined;

  constructor(readonly path: string) {}

  /**
   * Appends one line, synchronously: the `data` line is written from inside the body stream, and a line must be
   * on disk (in the OS's hands) before the step it announces can happen.
   */
  async note(customId: string, step: Step): Promise<void> {
    const folder = dirname(this.path);
    this.ready ??= mkdir(folder, { recursive: true }).catch((err: unknown) => {
      throw this.failure(`Creating the directory ${folder} of the SMTP journal`, err);
    });
    await this.ready;
    this.noteNow(customId, step);
  }

  noteNow(customId: string, step: Step): void {
    try {
      appendFileSync(this.path, `${stringifyJson({ custom_id: customId, at: new Date().toISOString(), ...step })}\n`);
    } catch (err) {
      throw this.failure(`Writing the SMTP journal ${this.path}`, err);
    }
  }

  /** The storage_error for a file-system failure while `doing`, the fs error its cause. */
  private failure(doing: string, err: unknown): ChainmailError {
    return new ChainmailError("STORAGE_ERROR", `${doing} failed: ${(err as Error).message}.`, {
      hint: "Check SMTP_JOURNAL: its directory must be writable.",
      details: { smtp_journal: this.path },
      cause: err,
    });
  }

  lookup(customIds: readonly string[]): Map<string, MessageResult> {
    const wanted = new Set(customIds);
    const last = new Map<string, Step>();
    let text = "";
    try {
      text = readFileSync(this.path, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      let entry: { custom_id?: unknown } & Step;
      try {
        entry = parseJson(line) as typeof entry;
      } catch {
        continue; // a line cut short by a crash: the step it announced never started
      }
      if (typeof entry.custom_id === "string" && wanted.has(entry.custom_id)) last.set(entry.custom_id, entry);
    }
    return new Map(
      customIds.map((id) => {
        const step = last.get(id);
        if (step?.step === "result") return [id, step.result];
        if (step?.step === "data")
          return [id, deliveryUnknownResult("the SMTP session ended while the server was receiving it")];
        return [id, notSentResult("the SMTP journal shows it never reached the server")];
      }),
    );
  }
}
