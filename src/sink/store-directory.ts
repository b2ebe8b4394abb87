// The directory driver (Node): one file per object under a root directory, keys as relative
// paths. A put writes a temporary file, fsyncs it and renames it over the final name, so a
// SIGKILL at any instant leaves either the old object or the new one, never half of one.
import { mkdir, open, readdir, readFile, rename } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import type { ObjectStore } from './store.js'

export function directoryStore(root: string): ObjectStore {
  const pathOf = (key: string) => {
    if (key.split('/').some((part) => part === '..' || part === '')) throw new Error(`object key ${JSON.stringify(key)} is not a plain relative path`)
    return join(root, ...key.split('/'))
  }
  return {
    describe: root,
    async put(key, body) {
      const path = pathOf(key)
      await mkdir(dirname(path), { recursive: true })
      // A name of this process's own, so two writers of one key never share a temporary file.
      const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
      const handle = await open(temporary, 'w')
      try {
        await handle.writeFile(body)
        await handle.sync()
      } finally {
        await handle.close()
      }
      await rename(temporary, path)
    },
    async get(key) {
      try {
        return new Uint8Array(await readFile(pathOf(key)))
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
        throw error
      }
    },
    async list(prefix) {
      const base = join(root, ...prefix.split('/').slice(0, -1))
      let entries: string[]
      try {
        entries = (await readdir(base, { recursive: true, withFileTypes: true }))
          .filter((e) => e.isFile() && !e.name.endsWith('.tmp'))
          .map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join('/'))
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
        throw error
      }
      return entries.filter((key) => key.startsWith(prefix)).sort()
    },
  }
}
