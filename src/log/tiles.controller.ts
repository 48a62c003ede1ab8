import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { pathOf } from '../common/http';
import { BadInputError, LedgerError } from '../common/errors';
import { ApiErrors } from '../common/openapi';
import { FreeRead } from '../common/rate-limit';
import { storedLeaf } from '../core/ledger/event-hash';
import { isTlogError, leafHash, MAX_BUNDLE_ENTRY, parseTilePath, TILE_WIDTH, TileRef, tileWidth } from '../core/tlog';
import { DatabaseService } from '../database/database.service';
import { EventsRepository } from '../ledger/events.repository';
import { leafBytesWithheld } from './log-answers';
import { LogService } from './log.service';
import { TileBandwidth } from './tile-bandwidth';
import { TileReads } from './tile-reads';
import { TreeRepository } from './tree.repository';

const OCTETS = 'application/octet-stream';
/** Full tiles and bundles never change. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Partial tiles and bundles: a short max-age (a checkpoint moves on within seconds). */
export const SHORT_LIVED = 'public, max-age=10';

/**
 * The log's read path as C2SP tlog-tiles (docs/tiles.md), over the tree of
 * the checkpoint `GET /checkpoint` serves: hash tiles, entry bundles, and
 * public leaves too large for a bundle. Outside the public read budget;
 * each answer spends the client's tile bandwidth budget
 * (TILE_BANDWIDTH_KIB_PER_MINUTE).
 */
@ApiTags('log')
@Controller()
export class TilesController {
  private readonly reads: TileReads;
  private readonly tree = new TreeRepository();

  constructor(
    private readonly log: LogService,
    private readonly db: DatabaseService,
    private readonly events: EventsRepository,
    private readonly bandwidth: TileBandwidth,
  ) {
    this.reads = new TileReads(events);
  }

  /**
   * `GET /tile/<L>/<N>[.p/<W>]` (hash tile: 32 x W bytes, W = 256 when
   * full) and `GET /tile/entries/<N>[.p/<W>]` (entry bundle: each leaf as a
   * big-endian uint16 length and its bytes; withheld and over-65,535-byte
   * leaves are zero-length entries), c2sp.org/tlog-tiles "Merkle Tree" and
   * "Log entries". 400 `tile_path_invalid`; 404 `tile_not_found` for a tile
   * beyond the served checkpoint's tree; 409 `tree_mismatch`; 429
   * `bandwidth_exceeded`; 404/503 as `GET /checkpoint` before the first one.
   */
  @Get('tile/*path')
  @FreeRead()
  @ApiOperation({ operationId: 'getTile', summary: 'A C2SP tlog-tiles hash tile or entry bundle: tile/<L>/<N>[.p/<W>], tile/entries/<N>[.p/<W>]' })
  @ApiParam({ name: 'path', description: 'e.g. 0/000, 1/x001/234/067.p/5, entries/000.p/17', schema: { type: 'string' } })
  @ApiResponse({ status: 200, description: 'the tile or bundle bytes', content: { [OCTETS]: { schema: { type: 'string', format: 'binary' } } } })
  @ApiErrors([400, 404, 409, 429, 503])
  async tile(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const path = pathOf(req).replace(/^\/+/, '');
    let t: TileRef;
    try {
      t = parseTilePath(path);
    } catch (e) {
      if (isTlogError(e)) throw new BadInputError('tile_path_invalid', e.message, { path: path.slice(0, 200) });
      throw e;
    }
    const cp = await this.log.requireLatest();
    const have = tileWidth(t.level, t.index, cp.size);
    // A partial tile of an earlier checkpoint stays served (its bytes are a prefix of today's); nothing beyond this tree is.
    if (have === 0 || (t.width === TILE_WIDTH ? have !== TILE_WIDTH : t.width > have)) {
      throw new LedgerError(404, 'tile_not_found', `the tree of the served checkpoint (size ${cp.size}) has no ${path}`, { path, checkpoint_size: cp.size });
    }
    const bytes = await this.reads.read(this.db, t);
    await this.bandwidth.spend(req, bytes.length);
    res.status(200).type(OCTETS).header('Cache-Control', t.width === TILE_WIDTH ? IMMUTABLE : SHORT_LIVED);
    res.send(bytes);
  }

  /**
   * `GET /leaf/<N>` (N in tile path elements, e.g. `leaf/x001/234/067`): the
   * exact bytes of a public leaf over 65,535 bytes, which its entry bundle
   * holds as a zero-length entry (c2sp.org/tlog-tiles: entries encoded
   * otherwise are served at another URL). 404 `leaf_not_found` for any
   * other leaf (a bundle holds it, or it is withheld) or beyond the served checkpoint.
   */
  @Get('leaf/*path')
  @FreeRead()
  @ApiOperation({ operationId: 'getLargeLeaf', summary: 'A public leaf too large for an entry bundle (over 65,535 bytes), its exact bytes' })
  @ApiParam({ name: 'path', description: 'the leaf index in tile path elements, e.g. 067, x001/234/067', schema: { type: 'string' } })
  @ApiResponse({ status: 200, description: 'the leaf bytes', content: { [OCTETS]: { schema: { type: 'string', format: 'binary' } } } })
  @ApiErrors([400, 404, 409, 429, 503])
  async largeLeaf(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const rel = pathOf(req).replace(/^\/+leaf\//, '');
    let index: number;
    try {
      index = parseTilePath(`tile/0/${rel}`).index;
      if (rel.includes('.p/')) throw new Error('no width');
    } catch {
      throw new BadInputError('tile_path_invalid', 'expected leaf/<N>, N in 3-digit path elements (x001/234/067)', { path: rel.slice(0, 200) });
    }
    const cp = await this.log.requireLatest();
    const notFound = new LedgerError(404, 'leaf_not_found', `leaf ${index} is not a public leaf over ${MAX_BUNDLE_ENTRY} bytes within the served checkpoint (size ${cp.size})`, { index });
    if (index >= cp.size) throw notFound;
    const [e] = await this.events.page(this.db, index, index + 1, 1);
    const leaf = e ? storedLeaf(e).leaf : null;
    if (!e || !leaf || leaf.length <= MAX_BUNDLE_ENTRY) throw notFound;
    const [stored] = await this.tree.level(this.db, 0, index, index + 1);
    if (!stored || !stored.hash.equals(leafHash(leaf))) throw new LedgerError(409, 'tree_mismatch', `leaf ${index} computed from its event does not match the stored tree`, { index });
    const withheld = await this.events.withheldPositions(this.db, index, index + 1);
    if (leafBytesWithheld(e, withheld.has(e.position), null)) throw notFound;
    await this.bandwidth.spend(req, leaf.length);
    res.status(200).type(OCTETS).header('Cache-Control', IMMUTABLE);
    res.send(leaf);
  }
}
