// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// ERC-721-shaped event source for ingestion benchmarks: one call emits `count` standard 4-topic Transfer
/// events (mints from address 0). It keeps no ownership state, so a transaction costs little more than its logs.
contract BulkMinter {
    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);

    string public constant name = "Chainmail Bulk 721";
    string public constant symbol = "CMBULK";

    function mintRange(address to, uint256 start, uint256 count) external {
        uint256 end = start + count;
        for (uint256 id = start; id < end; ++id) {
            emit Transfer(address(0), to, id);
        }
    }

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == 0x01ffc9a7 || interfaceId == 0x80ac58cd; // ERC-165, ERC-721
    }
}
