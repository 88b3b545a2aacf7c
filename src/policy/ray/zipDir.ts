/**
 * A folder as a zip archive (deflate, paths relative to the folder, forward slashes), the way Ray
 * packages a `working_dir` for upload; and the content hash Ray-style package names are made of.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { crc32, deflateRawSync } from 'node:zlib';

export interface ZipEntry {
  path: string;
  data: Buffer;
  mode: number;
}

/** Files under `dir`, sorted, skipping any path segment named in `exclude` (e.g. node_modules, .git). */
export function listFiles(dir: string, exclude: readonly string[] = []): ZipEntry[] {
  const out: ZipEntry[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      if (exclude.includes(name)) continue;
      const full = join(d, name);
      const st = statSync(full);
      if (st.isDirectory()) walk(full);
      else if (st.isFile()) out.push({ path: relative(dir, full).split(sep).join('/'), data: readFileSync(full), mode: st.mode & 0o777 });
    }
  };
  walk(dir);
  return out;
}

/** `_ray_pkg_<hash>.zip`: the hash covers every path and its bytes, so equal folders share one upload. */
export function packageName(entries: readonly ZipEntry[]): string {
  const h = createHash('sha1');
  for (const e of entries) h.update(e.path).update('\0').update(e.data).update('\0');
  return `_ray_pkg_${h.digest('hex').slice(0, 16)}.zip`;
}

export function zip(entries: readonly ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  // A fixed timestamp (1980-01-01): the archive's bytes depend on the files only.
  const time = 0;
  const date = (0 << 9) | (1 << 5) | 1;
  for (const e of entries) {
    const name = Buffer.from(e.path, 'utf8');
    const body = deflateRawSync(e.data);
    const crc = crc32(e.data) >>> 0;
    // The local header and the central directory entry share these fields, in this order.
    const shared = (b: Buffer, at: number) => {
      b.writeUInt16LE(20, at); // version needed: 2.0 (deflate)
      b.writeUInt16LE(0x0800, at + 2); // flags: names are UTF-8
      b.writeUInt16LE(8, at + 4); // method: deflate
      b.writeUInt16LE(time, at + 6);
      b.writeUInt16LE(date, at + 8);
      b.writeUInt32LE(crc, at + 10);
      b.writeUInt32LE(body.length, at + 14);
      b.writeUInt32LE(e.data.length, at + 18);
      b.writeUInt16LE(name.length, at + 22);
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    shared(local, 4);
    locals.push(local, name, body);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by: unix, so the mode below means something
    shared(central, 6);
    central.writeUInt32LE(((0o100000 | e.mode) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}
