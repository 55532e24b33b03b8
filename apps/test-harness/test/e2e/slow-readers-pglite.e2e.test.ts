import { describeSlowReaders } from "../support/slow-readers.js";

describeSlowReaders("pglite");
