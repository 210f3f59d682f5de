// isExtractDue: the pure rule of memory.Store.IsExtractDue.

/** DEFAULT_EXTRACT_EVERY_TURNS is the beat of extraction after the first answer (memory.DefaultExtractEveryTurns). */
export const DEFAULT_EXTRACT_EVERY_TURNS = 6;

/** MAX_EXTRACT_EVERY_TURNS is the largest beat the service accepts (the bound of memory.Config.ExtractEveryTurns, checked by Config.Validate). */
export const MAX_EXTRACT_EVERY_TURNS = 1000;

/** DueConfig is the part of the service's configuration that isExtractDue reads. */
export interface DueConfig {
  /** extractEveryTurns is the extractor's EXTRACT_EVERY_TURNS: 1 to 1000, default 6. */
  extractEveryTurns?: number;
  /** extractionDisabled switches extraction off, as the extractor's setting does. */
  extractionDisabled?: boolean;
}

/** checkDueConfig throws a RangeError for a beat the service would refuse at start. */
export function checkDueConfig(cfg: DueConfig): void {
  const n = cfg.extractEveryTurns ?? DEFAULT_EXTRACT_EVERY_TURNS;
  if (!Number.isInteger(n) || n < 1 || n > MAX_EXTRACT_EVERY_TURNS) {
    throw new RangeError(`usermemory: extractEveryTurns must be an integer from 1 to ${MAX_EXTRACT_EVERY_TURNS}`);
  }
}

/**
 * isExtractDue reports whether a thread earned an extraction with its last
 * call: after the first answer of a thread (previousTurnCount 0, turnCount
 * above it), then whenever the call crossed a multiple of
 * extractEveryTurns, even when it jumped over one. Never while extraction
 * is switched off. Pure.
 */
export function isExtractDue(cfg: DueConfig, previousTurnCount: number, turnCount: number): boolean {
  if (cfg.extractionDisabled || previousTurnCount < 0 || turnCount <= previousTurnCount) {
    return false;
  }
  if (previousTurnCount === 0) {
    return true;
  }
  const n = cfg.extractEveryTurns ?? DEFAULT_EXTRACT_EVERY_TURNS;
  return Math.trunc(turnCount / n) > Math.trunc(previousTurnCount / n);
}
