import type { QdrantCallContext } from './errors.js';
import { badResponse, type ScrollResult } from './responses.js';

type PointId = string | number;
type ScrollPoint = ScrollResult['points'][number];

/**
 * Reads every page of a scroll. Qdrant's `next_page_offset` is the id the next page starts at, so a correct
 * server never repeats one and every page brings points not seen before. A server (or proxy) that repeats an
 * offset, or answers a page of nothing new with a further offset, would otherwise keep this loop running
 * forever: that is a `bad_response` fault instead.
 */
export async function scrollAll(
  fetchPage: (offset: PointId | undefined) => Promise<ScrollResult>,
  context: QdrantCallContext,
  onPage: (points: ScrollPoint[]) => void | 'stop',
): Promise<void> {
  const offsets = new Set<string>();
  const seen = new Set<string>();
  let offset: PointId | undefined;
  for (;;) {
    const page = await fetchPage(offset);
    let fresh = 0;
    for (const point of page.points) {
      const key = idKey(point.id);
      if (!seen.has(key)) {
        seen.add(key);
        fresh += 1;
      }
    }
    if (onPage(page.points) === 'stop') return;
    const next = page.next_page_offset;
    if (next === undefined || next === null) return;
    const nextKey = idKey(next);
    if (offset !== undefined && nextKey === idKey(offset)) {
      badResponse(context, `answered next_page_offset ${JSON.stringify(next)}, the offset it was asked for: the scroll does not advance`, {
        offset: next,
      });
    }
    if (offsets.has(nextKey)) {
      badResponse(context, `answered next_page_offset ${JSON.stringify(next)} a second time: the scroll would loop`, { offset: next });
    }
    if (fresh === 0) {
      badResponse(
        context,
        `answered a page with no new points and a further next_page_offset ${JSON.stringify(next)}: the scroll does not advance`,
        {
          offset: next,
        },
      );
    }
    offsets.add(nextKey);
    offset = next;
  }
}

function idKey(id: PointId): string {
  return typeof id === 'number' ? `n:${id}` : `s:${id.toLowerCase()}`;
}
