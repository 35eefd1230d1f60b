// The report writers' atomic write is the shared one (temp file, fsync, rename).
export { writeFileAtomic } from '../io/atomic-write.js';
