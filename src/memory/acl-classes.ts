/**
 * ACL classes of the embedded store: every distinct `acl` list its chunks carry gets a small integer, so a
 * request's principals become one visibility bit per class before anything is read. Postings and per-source
 * summaries are grouped by class, which lets a read skip whatever the caller may not see without touching it:
 * the work of a request follows what the caller may read, not what the store holds (no timing side channel).
 *
 * A chunk is visible to `principals` exactly when `aclFilter(principals)` matches it: its `acl` is absent or
 * empty, or shares a value with `principals`.
 */
export class AclClasses {
  /** Class 0 is the chunks without an ACL. */
  static readonly PUBLIC = 0;

  readonly #byKey = new Map<string, number>([['', AclClasses.PUBLIC]]);
  readonly #acls: (readonly string[] | undefined)[] = [undefined];
  /** Classes whose list holds a principal (each class once per principal). */
  readonly #byPrincipal = new Map<string, number[]>();
  /** Classes everyone may read: no ACL, or an empty list (which `is_empty` reads as none). */
  readonly #open: number[] = [AclClasses.PUBLIC];

  get count(): number {
    return this.#acls.length;
  }

  /** The class of an `acl` list, created on first use. Lists in another order are other classes. */
  classOf(acl: readonly string[] | undefined): number {
    if (acl === undefined) return AclClasses.PUBLIC;
    const key = JSON.stringify(acl);
    let id = this.#byKey.get(key);
    if (id !== undefined) return id;
    id = this.#acls.length;
    const copy = Object.freeze([...acl]);
    this.#acls.push(copy);
    this.#byKey.set(key, id);
    if (copy.length === 0) this.#open.push(id);
    for (const principal of new Set(copy)) {
      const list = this.#byPrincipal.get(principal);
      if (list === undefined) this.#byPrincipal.set(principal, [id]);
      else list.push(id);
    }
    return id;
  }

  /** The `acl` lists of classes 1, 2, ... in order (what a store file records to rebuild the same classes). */
  lists(): (readonly string[])[] {
    return this.#acls.slice(1).map((acl) => acl ?? []);
  }

  /**
   * Whether these classes are the first ones of `lists` (as `lists()` gives them): then `extend(lists)` numbers the
   * rest as the store that wrote `lists` numbered them, and segments numbered by either agree.
   */
  isPrefixOf(lists: readonly (readonly string[])[]): boolean {
    const own = this.lists();
    return own.length <= lists.length && own.every((acl, i) => JSON.stringify(acl) === JSON.stringify(lists[i]));
  }

  /** Adds the classes of `lists` past the ones known (see `isPrefixOf`); false when one comes out numbered otherwise. */
  extend(lists: readonly (readonly string[])[]): boolean {
    return lists.every((acl, i) => this.classOf(acl) === i + 1);
  }

  /** The `acl` list of a class (undefined for class 0). */
  acl(id: number): readonly string[] | undefined {
    return this.#acls[id];
  }

  /**
   * One byte per class, 1 where `principals` may read it; null for `'all'` (the full view: no ACL applies).
   * No principals (`[]`) is the anonymous view: unrestricted classes only. Built from the caller's own
   * principals: the cost does not depend on which restricted classes exist.
   */
  visibility(principals: readonly string[] | 'all'): Uint8Array | null {
    if (principals === 'all') return null;
    const visible = new Uint8Array(this.#acls.length);
    for (const id of this.#open) visible[id] = 1;
    for (const principal of principals) {
      const ids = this.#byPrincipal.get(principal);
      if (ids !== undefined) for (const id of ids) visible[id] = 1;
    }
    return visible;
  }
}
