import { expect } from 'vitest';
import { isLitmPackError, type LitmPackError, type LitmPackErrorCode } from '../../src/index.js';

/** The `LitmPackError` a promise rejects with, checked to carry `code`; fails the test when it resolves. */
export async function failure(promise: Promise<unknown>, code: LitmPackErrorCode): Promise<LitmPackError> {
  try {
    await promise;
  } catch (error) {
    expect(isLitmPackError(error, code), `expected ${code}, got ${String(error)}`).toBe(true);
    return error as LitmPackError;
  }
  throw new Error(`expected a LitmPackError ${code}, got a result`);
}
