/**
 * The first `n` items of several individually sorted streams, in order: a k-way merge
 * over a binary heap of stream heads. A date-range listing merges one stream per
 * series, so it computes about (series + n) occurrences instead of every occurrence
 * of every series in the range.
 */
export function takeMerged<T>(streams: Iterable<Iterator<T>>, less: (a: T, b: T) => boolean, n: number): T[] {
  const heap: { head: T; rest: Iterator<T> }[] = [];
  const lessAt = (i: number, j: number) => less((heap[i] as { head: T }).head, (heap[j] as { head: T }).head);
  const swap = (i: number, j: number) => {
    [heap[i], heap[j]] = [heap[j] as (typeof heap)[number], heap[i] as (typeof heap)[number]];
  };
  const up = (start: number) => {
    for (let i = start; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!lessAt(i, parent)) return;
      swap(i, parent);
      i = parent;
    }
  };
  const down = (start: number) => {
    for (let i = start; ; ) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && lessAt(left, smallest)) smallest = left;
      if (right < heap.length && lessAt(right, smallest)) smallest = right;
      if (smallest === i) return;
      swap(i, smallest);
      i = smallest;
    }
  };

  for (const rest of streams) {
    const first = rest.next();
    if (first.done !== true) {
      heap.push({ head: first.value, rest });
      up(heap.length - 1);
    }
  }
  const out: T[] = [];
  while (out.length < n && heap.length > 0) {
    const top = heap[0] as (typeof heap)[number];
    out.push(top.head);
    const next = top.rest.next();
    if (next.done === true) {
      const last = heap.pop() as (typeof heap)[number];
      if (heap.length === 0) break;
      heap[0] = last;
    } else {
      top.head = next.value;
    }
    down(0);
  }
  return out;
}
