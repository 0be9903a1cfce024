// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {ERC721Consecutive} from "@openzeppelin/contracts/token/ERC721/extensions/ERC721Consecutive.sol";

/// ERC-2309 batch mints at construction (OpenZeppelin's ERC721Consecutive): one `ConsecutiveTransfer` per batch.
/// The batch size limit is raised so that a test can mint a range larger than the index expands.
contract ConsecutiveMint is ERC721Consecutive {
    constructor(address[] memory owners, uint96[] memory sizes) ERC721("Consecutive", "CSC") {
        for (uint256 i = 0; i < owners.length; i++) _mintConsecutive(owners[i], sizes[i]);
    }

    function _maxBatchSize() internal pure override returns (uint96) {
        return 20_000;
    }
}
